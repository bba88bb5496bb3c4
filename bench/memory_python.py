# An allocation-heavy Python program for docs/memory.md's comparison with heaptrack ("Real
# programs beside heaptrack"): what CPython asks glibc's malloc for, past its own small-object
# arenas (512 bytes and less), in four ways: containers growing (list_resize, dictresize), lists
# repeated ([i] * 100: list_repeat), bytes objects of 4 KiB and strings of 1-10 KB
# (str(i) * n). Usage: memory_python.py [SCALE] (SCALE times the four).
import sys


def grow_containers(n):
    lst, d = [], {}
    for i in range(n):
        lst.append(i)
        d[i] = i
    return len(lst) + len(d)


def repeat_lists(n):
    return sum(len([i] * 100) for i in range(n))


def make_bytes(n):
    return sum(len(bytes(4096)) for _ in range(n))


def make_strings(n):
    return sum(len(str(i) * (1000 + i % 1000)) for i in range(n))


if __name__ == '__main__':
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    for _ in range(scale):
        print(grow_containers(300000), repeat_lists(100000), make_bytes(50000), make_strings(50000))
