.output-asan/tests/test_target.o: tests/test_target.c user/target.h \
 user/util.h
user/target.h:
user/util.h:
