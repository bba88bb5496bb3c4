.output-asan/user/event.o: user/event.c user/event.h user/util.h
user/event.h:
user/util.h:
