# Turns one of etcd's .proto files (third_party/) into one protoc can
# compile for C++: drops the imports of
# gogoproto/gogo.proto and google/api/annotations.proto (Debian ships
# neither for C++) and every option that refers to them. Those options only
# steer Go code generation and the HTTP gateway; the wire format is the
# same. Run as: cmake -DIN=FILE -DOUT=FILE -P strip_go_options.cmake
file(READ "${IN}" text)
string(REGEX REPLACE "import \"gogoproto/gogo.proto\";" "" text "${text}")
string(REGEX REPLACE "import \"google/api/annotations.proto\";" "" text "${text}")
# File options: option (gogoproto.marshaler_all) = true;
string(REGEX REPLACE "option \\(gogoproto\\.[a-z_]+\\) = [a-z]+;" "" text "${text}")
# Field options: [(gogoproto.nullable) = false, (gogoproto.customname) = "X"]
string(REGEX REPLACE "\\[\\(gogoproto\\.[^]]*\\]" "" text "${text}")
# HTTP gateway blocks: option (google.api.http) = { post: "..." body: "*" };
# some hold one nested block (additional_bindings { ... }).
string(REGEX REPLACE "option \\(google\\.api\\.http\\) = {[^{}]*({[^{}]*}[^{}]*)?};" "" text "${text}")
if(text MATCHES "gogoproto|google\\.api")
  string(REGEX MATCH "[^\n]*(gogoproto|google\\.api)[^\n]*" bad "${text}")
  message(FATAL_ERROR "${IN}: an option this script does not know survived; compare it with the etcd release: ${bad}")
endif()
file(WRITE "${OUT}" "${text}")
