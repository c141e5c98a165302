"""The train.py of the documentation's examples (tools/doc-test copies it
into each document's directory): a program without markers, whose steps and
phases mfu-record takes from its functions by name
(--step py:train.train_step --phase forward=py:Net.forward
--phase load=py:load_batch). A 32x32 linear layer in plain Python lists."""

import random


class Net:
    def __init__(self, n, m):
        self.w = [[random.random() for _ in range(m)] for _ in range(n)]

    def forward(self, x):
        return [sum(a * b for a, b in zip(row, x)) for row in self.w]


def load_batch(n):
    return [random.random() for _ in range(n)]


def train_step(net, x):
    return sum(net.forward(x))


def main():
    random.seed(1)
    net = Net(32, 32)
    for _ in range(20):
        train_step(net, load_batch(32))


if __name__ == "__main__":
    main()
