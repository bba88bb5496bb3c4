.output-asan/tests/test_cgroup.o: tests/test_cgroup.c user/cgroup.h \
 user/util.h tests/helpers.h user/profile.h
user/cgroup.h:
user/util.h:
tests/helpers.h:
user/profile.h:
