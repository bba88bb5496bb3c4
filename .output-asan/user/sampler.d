.output-asan/user/sampler.o: user/sampler.c bpf/hsbpf.h \
 .output-asan/profile.skel.h .output-asan/empty.skel.h \
 .output-asan/lbr.skel.h user/sampler.h user/event.h user/util.h \
 user/period.h user/profile.h
bpf/hsbpf.h:
.output-asan/profile.skel.h:
.output-asan/empty.skel.h:
.output-asan/lbr.skel.h:
user/sampler.h:
user/event.h:
user/util.h:
user/period.h:
user/profile.h:
