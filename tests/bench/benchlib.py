"""What the Python benchmarks share: the machine they ran on, as the first
line of their output (docs/performance.md names it with every table)."""
import os
import platform


def cpu_model():
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    return platform.processor()


def machine(extra=''):
    """'machine: MODEL, N CPUs, Linux RELEASE' and @extra after a comma."""
    return 'machine: %s, %d CPUs, Linux %s%s' % (cpu_model(), os.cpu_count(), platform.release(),
                                                  ', ' + extra if extra else '')
