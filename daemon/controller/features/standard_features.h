// The features gantryd runs beside the controller's core, in the order
// their hooks are called (daemon/controller/controller_feature.h). gantryd
// and the tests that drive a whole controller register this list.
#pragma once

#include <vector>

#include "daemon/controller/controller_feature.h"

namespace gantry {

std::vector<FeatureFactory> StandardFeatures();

}  // namespace gantry
