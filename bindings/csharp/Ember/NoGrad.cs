using System;
using Ember.Native;

namespace Ember
{
    /// <summary>`using (new NoGrad()) { ... }`: nothing is recorded for autodiff on this thread inside the block.
    /// Scopes nest; dispose it on the thread that made it (Ember's no-grad state is per thread).</summary>
    public sealed class NoGrad : IDisposable
    {
        private bool open;

        public NoGrad()
        {
            Interop.Check(NativeMethods.ember_no_grad_enter());
            open = true;
        }

        /// <summary>False inside a NoGrad scope on this thread.</summary>
        public static bool IsGradEnabled
        {
            get
            {
                int enabled;
                Interop.Check(NativeMethods.ember_is_grad_enabled(out enabled));
                return enabled != 0;
            }
        }

        public void Dispose()
        {
            if (!open) return;
            open = false;
            Interop.Check(NativeMethods.ember_no_grad_exit());
        }
    }
}
