.output-asan/user/json_writer.o: user/json_writer.c user/json_writer.h \
 user/util.h
user/json_writer.h:
user/util.h:
