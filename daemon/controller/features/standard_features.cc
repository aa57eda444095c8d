#include "daemon/controller/features/standard_features.h"

#include "daemon/controller/features/elastic/elastic_feature.h"
#include "daemon/controller/features/goodput/goodput_feature.h"
#include "daemon/controller/features/memory_checkpoints/memory_checkpoint_feature.h"
#include "daemon/controller/features/preflight/preflight_feature.h"

namespace gantry {

std::vector<FeatureFactory> StandardFeatures(const FeatureSettings& settings) {
  return {MakeGoodputFeature,
          StragglerFeatureFactory(settings.stragglers),
          PreflightFeatureFactory(settings.preflight),
          FaultSurvivorFeatureFactory(settings.fault_survivors),
          MakeMemoryCheckpointFeature,
          MakeElasticFeature};
}

}  // namespace gantry
