# Turns one file into C++: `std::string_view cohort::api::web::<SYMBOL>()` returning its
# bytes. Run as a build step: cmake -DINPUT=<file> -DOUTPUT=<.cpp> -DSYMBOL=<name> -P this.
file(READ "${INPUT}" _hex HEX)
string(LENGTH "${_hex}" _n)
math(EXPR _bytes "${_n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _array "${_hex}")
# Break the array into lines of 32 bytes so compilers and editors stay comfortable.
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" _array "${_array}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by cmake/embed_file.cmake: do not edit.\n"
"#include <string_view>\n\n"
"namespace cohort::api::web {\n"
"namespace {\n"
"const unsigned char kData[${_bytes} + 1] = {\n${_array}0x00};\n"
"}  // namespace\n\n"
"std::string_view ${SYMBOL}() {\n"
"  return {reinterpret_cast<const char*>(kData), ${_bytes}};\n"
"}\n\n"
"}  // namespace cohort::api::web\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
