.output-asan/user/hist.o: user/hist.c user/bblock.h user/elf_image.h \
 user/util.h user/hist.h user/profile.h user/symbolizer.h \
 user/lbr_estimate.h
user/bblock.h:
user/elf_image.h:
user/util.h:
user/hist.h:
user/profile.h:
user/symbolizer.h:
user/lbr_estimate.h:
