.output-asan/user/cmd-report.o: user/cmd-report.c user/cmds.h user/util.h \
 user/hist.h user/profile.h user/symbolizer.h bpf/hsbpf.h \
 user/lbr_report.h user/truth.h
user/cmds.h:
user/util.h:
user/hist.h:
user/profile.h:
user/symbolizer.h:
bpf/hsbpf.h:
user/lbr_report.h:
user/truth.h:
