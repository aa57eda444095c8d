#include "cli/views/printable_records.h"

#include <algorithm>
#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include "common/terminal_text.h"

namespace gantry::cli {
namespace {

using google::protobuf::FieldDescriptor;

// Printable ASCII, which both repairs leave unchanged: most text is, and
// testing it costs far less than rewriting it (a listing of 50,000 jobs
// spent a fifth of its time rewriting strings into themselves).
bool IsPrintableAscii(const std::string& text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c >= 0x20 && c < 0x7f; });
}

std::string Repair(const std::string& text, OutputKind kind) {
  return kind == OutputKind::kTerminal ? EscapeForTerminal(text)
                                       : ReplaceInvalidUtf8(text);
}

}  // namespace

void MakePrintable(google::protobuf::Message& message, OutputKind kind) {
  const google::protobuf::Reflection& reflection = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);  // only those set
  std::string scratch;  // for a field not stored as a string
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
        field->type() != FieldDescriptor::TYPE_BYTES) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection.FieldSize(message, field); ++i) {
          const std::string& text = reflection.GetRepeatedStringReference(
              message, field, i, &scratch);
          if (IsPrintableAscii(text)) continue;
          reflection.SetRepeatedString(&message, field, i, Repair(text, kind));
        }
      } else {
        const std::string& text =
            reflection.GetStringReference(message, field, &scratch);
        if (IsPrintableAscii(text)) continue;
        reflection.SetString(&message, field, Repair(text, kind));
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      // Maps are repeated entry messages: their keys and values are
      // repaired like any other field.
      if (field->is_repeated()) {
        for (int i = 0; i < reflection.FieldSize(message, field); ++i) {
          MakePrintable(*reflection.MutableRepeatedMessage(&message, field, i),
                        kind);
        }
      } else {
        MakePrintable(*reflection.MutableMessage(&message, field), kind);
      }
    }
  }
}

}  // namespace gantry::cli
