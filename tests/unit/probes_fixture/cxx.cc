// C++ names for test_probes: namespaces, overloads, a template, a method.
#include <cstdio>
#include <cstring>

namespace fixture {
volatile long sink;

__attribute__((noinline)) int scale(int x)
{
	sink += x;
	return x * 2;
}
__attribute__((noinline)) double scale(double x)
{
	sink += 1;
	return x * 2;
}
__attribute__((noinline)) long only_once(long x)
{
	sink += x;
	return x + 1;
}
template <typename T> __attribute__((noinline)) T twice(T x)
{
	sink += 1;
	return x + x;
}
template int twice<int>(int);

struct Worker {
	int n;
	__attribute__((noinline)) int step(int k) const;
};
int Worker::step(int k) const
{
	sink += k;
	return n + k;
}
} // namespace fixture

int main(int argc, char **argv)
{
	fixture::Worker w{3};
	long r = fixture::scale(argc) + (long)fixture::scale(1.5) + fixture::only_once(argc) +
		 fixture::twice<int>(argc) + w.step(argc);
	if (argc > 1 && !std::strcmp(argv[1], "print"))
		std::printf("%ld\n", r);
	return 0;
}
