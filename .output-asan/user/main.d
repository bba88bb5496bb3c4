.output-asan/user/main.o: user/main.c user/cmds.h user/util.h
user/cmds.h:
user/util.h:
