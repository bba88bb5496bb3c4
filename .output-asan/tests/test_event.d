.output-asan/tests/test_event.o: tests/test_event.c user/event.h \
 user/util.h
user/event.h:
user/util.h:
