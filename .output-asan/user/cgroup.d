.output-asan/user/cgroup.o: user/cgroup.c user/cgroup.h user/util.h
user/cgroup.h:
user/util.h:
