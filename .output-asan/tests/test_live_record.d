.output-asan/tests/test_live_record.o: tests/test_live_record.c \
 user/cgroup.h user/util.h user/event.h tests/helpers.h user/profile.h \
 bpf/hsbpf.h user/period.h user/sampler.h user/event.h user/period.h \
 user/profile.h user/symbolizer.h
user/cgroup.h:
user/util.h:
user/event.h:
tests/helpers.h:
user/profile.h:
bpf/hsbpf.h:
user/period.h:
user/sampler.h:
user/event.h:
user/period.h:
user/profile.h:
user/symbolizer.h:
