using System;
using Ember.Native;

namespace Ember
{
    /// <summary>A failed Ember call: the status it returned and the message Ember stored for it
    /// (ember_last_error(), read on the failing thread right after the call).</summary>
    public class EmberException : Exception
    {
        public EmberStatus Status { get; private set; }
        /// <summary>Ember's own message, without the status name that Message adds in front.</summary>
        public string EmberMessage { get; private set; }

        public EmberException(EmberStatus status, string emberMessage)
            : base(StatusName(status) + ": " + emberMessage)
        {
            Status = status;
            EmberMessage = emberMessage;
        }

        /// <summary>"EMBER_ERR_SHAPE", as ember_status_name says.</summary>
        public static string StatusName(EmberStatus status)
        {
            return Interop.Utf8(NativeMethods.ember_status_name(status));
        }
    }

    /// <summary>A failed strict load: Ember's message (which lists the mismatches) and the load report's text on its
    /// own, one missing, unexpected or mismatching entry per line.</summary>
    public class EmberLoadException : EmberException
    {
        public string Report { get; private set; }

        public EmberLoadException(EmberStatus status, string emberMessage, string report)
            : base(status, emberMessage)
        {
            Report = report;
        }
    }
}
