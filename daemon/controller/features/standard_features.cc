#include "daemon/controller/features/standard_features.h"

#include <memory>

#include "daemon/controller/features/datasets/datasets_feature.h"
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
          MakeElasticFeature,
          [checkpoint_interval = settings.checkpoint_interval](
              FeatureContext& context) -> std::unique_ptr<ControllerFeature> {
            return std::make_unique<CheckpointIntervalFeature>(
                context, checkpoint_interval);
          },
          [stage_ahead = settings.stage_ahead](
              FeatureContext& context) -> std::unique_ptr<ControllerFeature> {
            return std::make_unique<DatasetsFeature>(context, stage_ahead);
          }};
}

}  // namespace gantry
