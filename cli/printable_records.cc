#include "cli/printable_records.h"

#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include "common/terminal_text.h"

namespace gantry::cli {
namespace {

using google::protobuf::FieldDescriptor;

std::string Repair(const std::string& text, OutputKind kind) {
  return kind == OutputKind::kTerminal ? EscapeForTerminal(text)
                                       : ReplaceInvalidUtf8(text);
}

}  // namespace

void MakePrintable(google::protobuf::Message& message, OutputKind kind) {
  const google::protobuf::Reflection& reflection = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);  // only those set
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
        field->type() != FieldDescriptor::TYPE_BYTES) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection.FieldSize(message, field); ++i) {
          reflection.SetRepeatedString(
              &message, field, i,
              Repair(reflection.GetRepeatedString(message, field, i), kind));
        }
      } else {
        reflection.SetString(
            &message, field,
            Repair(reflection.GetString(message, field), kind));
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
