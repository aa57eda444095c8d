// Makes the records gantryd sends safe to print, just before a command
// prints them: every string field of a response (job names, paths,
// reasons, node features, events, ...), however deep, is rewritten.
//
// For a terminal, control characters and ill-formed UTF-8 become visible
// escapes (common/terminal_text.h): records stored before gantryd refused
// such text, and free text from agents, must not drive the terminal. For
// JSON, only ill-formed UTF-8 is replaced (the JSON library escapes control
// characters itself, and throws on ill-formed UTF-8).
//
// Pure functions on the message; not thread-safe on one message.
#pragma once

#include <google/protobuf/message.h>

namespace gantry::cli {

enum class OutputKind { kTerminal, kJson };

void MakePrintable(google::protobuf::Message& message, OutputKind kind);

}  // namespace gantry::cli
