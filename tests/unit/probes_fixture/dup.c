/* A second static function called dup_fn: "dup_fn" is ambiguous in the
 * fixture's .symtab. */
volatile long fixture_dup_sink;

static __attribute__((noinline, used)) int dup_fn(void)
{
	fixture_dup_sink += 2;
	return 2;
}

int fixture_dup_other(void);
int fixture_dup_other(void)
{
	return dup_fn();
}
