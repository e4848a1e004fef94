#include "sandbox/sanitizer_runtime.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define HB_HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HB_HAVE_ASAN 1
#endif
#endif

#ifdef HB_HAVE_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace hb::sandbox {

void warm_up_sanitizer_runtime() {
#ifdef HB_HAVE_ASAN
    char frame[256];
    __sanitizer_symbolize_pc(__builtin_return_address(0), "%p %F %L", frame, sizeof frame);
#endif
}

}  // namespace hb::sandbox
