using Ember.Native;

namespace Ember
{
    /// <summary>Process-wide functions of the library.</summary>
    public static class Library
    {
        /// <summary>"0.1.0": the version of the libember actually loaded.</summary>
        public static string Version { get { return Interop.Utf8(NativeMethods.ember_version()); } }

        /// <summary>major * 1000000 + minor * 1000 + patch of the library actually loaded.</summary>
        public static int VersionNumber { get { return NativeMethods.ember_version_number(); } }

        /// <summary>EMBER_ABI_VERSION of the loaded library; equals NativeMethods.VersionAbi when the binding was
        /// generated for it.</summary>
        public static int AbiVersion { get { return NativeMethods.ember_abi_version(); } }

        /// <summary>Seeds the generator used for parameter initialization and dropout masks.</summary>
        public static void Seed(ulong seed) { Interop.Check(NativeMethods.ember_seed(seed)); }

        /// <summary>Threads used by CPU kernels (n >= 1); call it before running work.</summary>
        public static void SetNumThreads(int n) { Interop.Check(NativeMethods.ember_set_num_threads(n)); }

        /// <summary>This thread's last error message ("" if none).</summary>
        public static string LastError { get { return Interop.Utf8(NativeMethods.ember_last_error()); } }
    }
}
