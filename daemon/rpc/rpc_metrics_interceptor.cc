#include "daemon/rpc/rpc_metrics_interceptor.h"

#include <google/protobuf/descriptor.h>

namespace gantry {
namespace {

class RpcMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(std::string method,
                        prometheus::Family<prometheus::Counter>& handled)
      : method_(std::move(method)), handled_(handled) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      handled_
          .Add({{"method", method_},
                {"code", std::string(StatusCodeName(status.error_code()))}})
          .Increment();
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  prometheus::Family<prometheus::Counter>& handled_;
};

}  // namespace

std::string_view StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

std::string RpcMethodLabel(std::string_view path,
                           const std::set<std::string>& known) {
  if (path.empty() || !known.count(std::string(path))) return "unknown";
  return std::string(path.substr(1));
}

std::set<std::string> RpcMethodPaths(
    const std::vector<std::string>& service_full_names) {
  std::set<std::string> paths;
  const google::protobuf::DescriptorPool* pool =
      google::protobuf::DescriptorPool::generated_pool();
  for (const std::string& name : service_full_names) {
    const google::protobuf::ServiceDescriptor* service =
        pool->FindServiceByName(name);
    if (service == nullptr) continue;
    for (int i = 0; i < service->method_count(); ++i) {
      paths.insert("/" + name + "/" + service->method(i)->name());
    }
  }
  return paths;
}

RpcMetricsInterceptorFactory::RpcMetricsInterceptorFactory(
    prometheus::Registry& registry, std::set<std::string> known_paths,
    std::set<std::string> stream_paths)
    : known_paths_(std::move(known_paths)),
      stream_paths_(std::move(stream_paths)),
      started_(prometheus::BuildCounter()
                   .Name("gantry_rpc_started_total")
                   .Help("gRPC calls gantryd received, by method")
                   .Register(registry)),
      handled_(prometheus::BuildCounter()
                   .Name("gantry_rpc_handled_total")
                   .Help("gRPC calls gantryd answered, by method and status "
                         "code (code!=\"OK\": errors)")
                   .Register(registry)) {}

grpc::experimental::Interceptor*
RpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  const char* path = info->method();
  std::string method = RpcMethodLabel(path ? path : "", known_paths_);
  started_.Add({{"method", method}}).Increment();
  if (path != nullptr && stream_paths_.count(path)) return nullptr;
  return new RpcMetricsInterceptor(std::move(method), handled_);
}

void RpcMetricsInterceptorFactory::CountHandled(std::string_view path,
                                                grpc::StatusCode code) {
  handled_
      .Add({{"method", RpcMethodLabel(path, known_paths_)},
            {"code", std::string(StatusCodeName(code))}})
      .Increment();
}

}  // namespace gantry
