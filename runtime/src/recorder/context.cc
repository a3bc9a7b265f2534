// Cross-thread parents: a Context names a position in a thread's stream; the
// collector resolves it to the innermost span open there.
#include "spanprof/context.h"

#include "recorder/recorder_internal.h"

namespace spanprof {

Context CurrentContext() noexcept {
  Context ctx;
  uint32_t epoch = 0;
  uint32_t slot = 0;
  uint64_t position = 0;
  uint64_t side = 0;
  if (internal::CurrentPosition(&epoch, &slot, &position, &side)) {
    ctx.epoch_ = epoch;
    ctx.thread_ = slot;
    ctx.position_ = position;
    ctx.side_ = side;
  }
  return ctx;
}

ContextScope::ContextScope(const Context& ctx) noexcept {
  if (!ctx.valid()) return;
  if (internal::PushContext(ctx.epoch_, ctx.thread_, ctx.position_,
                            ctx.side_)) {
    epoch_ = ctx.epoch_;
  }
}

ContextScope::~ContextScope() {
  if (epoch_ != 0) internal::PopContext(epoch_);
}

}  // namespace spanprof
