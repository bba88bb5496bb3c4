.output-asan/user/ksyms.o: user/ksyms.c bpf/hsbpf.h user/ksyms.h \
 user/profile.h user/util.h
bpf/hsbpf.h:
user/ksyms.h:
user/profile.h:
user/util.h:
