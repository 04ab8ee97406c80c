# Turns a text file into a C string: const char NAME[] = "...";
file(READ ${IN} content HEX)
string(LENGTH "${content}" n)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
file(WRITE ${OUT} "/* generated from ${IN} */\nconst char ${NAME}[] = {${bytes} 0x00};\n")
