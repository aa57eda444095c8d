// Sets every field of a protobuf message, and of the messages in it down to
// a depth, to something other than its default (one element for a repeated
// field; each string its field's name and an ESC character), so a test can
// tell that code walking or copying messages missed no field.
#pragma once

#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

namespace gantry::testing {

inline void FillEveryField(google::protobuf::Message& message, int depth) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor& type = *message.GetDescriptor();
  const google::protobuf::Reflection& r = *message.GetReflection();
  for (int i = 0; i < type.field_count(); ++i) {
    const FieldDescriptor* f = type.field(i);
    const bool repeated = f->is_repeated();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (depth > 0) {
          FillEveryField(repeated ? *r.AddMessage(&message, f)
                                  : *r.MutableMessage(&message, f),
                         depth - 1);
        }
        break;
      case FieldDescriptor::CPPTYPE_STRING: {
        const std::string text = f->name() + "\x1b";
        repeated ? r.AddString(&message, f, text)
                 : r.SetString(&message, f, text);
        break;
      }
      case FieldDescriptor::CPPTYPE_INT32:
        repeated ? r.AddInt32(&message, f, -7) : r.SetInt32(&message, f, -7);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        repeated ? r.AddInt64(&message, f, -9) : r.SetInt64(&message, f, -9);
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        repeated ? r.AddUInt32(&message, f, 7) : r.SetUInt32(&message, f, 7);
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        repeated ? r.AddUInt64(&message, f, 9) : r.SetUInt64(&message, f, 9);
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        repeated ? r.AddDouble(&message, f, 0.5)
                 : r.SetDouble(&message, f, 0.5);
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        repeated ? r.AddFloat(&message, f, 0.25f)
                 : r.SetFloat(&message, f, 0.25f);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        repeated ? r.AddBool(&message, f, true) : r.SetBool(&message, f, true);
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int last = f->enum_type()->value_count() - 1;
        const int value = f->enum_type()->value(last)->number();
        repeated ? r.AddEnumValue(&message, f, value)
                 : r.SetEnumValue(&message, f, value);
        break;
      }
    }
  }
}

}  // namespace gantry::testing
