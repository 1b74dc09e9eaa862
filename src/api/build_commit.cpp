// The git commit the library was built from, stamped by cmake/BuildCommit.cmake.
#include "build_commit.h"

#include "flashvision/version.h"

namespace flashvision {

const char* build_commit() { return FLASHVISION_BUILD_COMMIT; }

}  // namespace flashvision
