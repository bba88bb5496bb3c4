.output-asan/tests/test_json_writer.o: tests/test_json_writer.c \
 user/json_writer.h user/util.h
user/json_writer.h:
user/util.h:
