using System;
using System.Runtime.InteropServices;
using System.Text;
using Ember.Native;

namespace Ember
{
    /// <summary>What every wrapper needs around the P/Invoke layer: status checks, UTF-8 strings both ways, size_t
    /// conversions (so that callers never cast UIntPtr) and pinned host arrays.</summary>
    public static class Interop
    {
        /// <summary>Throws EmberException with Ember's message unless status is EMBER_OK.</summary>
        public static void Check(EmberStatus status)
        {
            if (status != EmberStatus.Ok) throw new EmberException(status, Utf8(NativeMethods.ember_last_error()));
        }

        /// <summary>A NUL-terminated UTF-8 string Ember owns, copied; the pointer is never freed (Ember's strings
        /// live in static or per-thread storage, which is why no P/Invoke here returns `string`).</summary>
        public static string Utf8(IntPtr text)
        {
            if (text == IntPtr.Zero) return null;
            int length = 0;
            while (Marshal.ReadByte(text, length) != 0) ++length;
            var bytes = new byte[length];
            Marshal.Copy(text, bytes, 0, length);
            return Encoding.UTF8.GetString(bytes);
        }

        /// <summary>The NUL-terminated UTF-8 bytes Ember takes for a `const char*` (null stays NULL).</summary>
        public static byte[] Utf8z(string text)
        {
            if (text == null) return null;
            var bytes = new byte[Encoding.UTF8.GetByteCount(text) + 1];
            Encoding.UTF8.GetBytes(text, 0, text.Length, bytes, 0);
            return bytes;
        }

        public static UIntPtr Size(long value)
        {
            if (value < 0) throw new ArgumentOutOfRangeException("value", "a size cannot be negative");
            return new UIntPtr((ulong)value);
        }

        public static long Long(UIntPtr value) { return checked((long)value.ToUInt64()); }

        /// <summary>A string-returning function as Ember's string rule describes: ask the length, then fill a buffer
        /// of length + 1. A length query (capacity 0) may report EMBER_ERR_BUFFER_TOO_SMALL on older libraries.
        /// </summary>
        public delegate EmberStatus StringQuery(byte[] buffer, UIntPtr capacity, out UIntPtr length);

        public static string ReadString(StringQuery query)
        {
            UIntPtr length;
            var status = query(null, UIntPtr.Zero, out length);
            if (status != EmberStatus.Ok && status != EmberStatus.ErrBufferTooSmall) Check(status);
            var buffer = new byte[Long(length) + 1];
            Check(query(buffer, Size(buffer.Length), out length));
            return Encoding.UTF8.GetString(buffer, 0, (int)Long(length));
        }

        /// <summary>Runs body with a pointer to the pinned array (numbers only), for `const void*` / `void*`.</summary>
        public static T Pinned<T>(Array data, Func<IntPtr, T> body)
        {
            var pin = GCHandle.Alloc(data, GCHandleType.Pinned);
            try
            {
                return body(data.Length == 0 ? IntPtr.Zero : pin.AddrOfPinnedObject());
            }
            finally
            {
                pin.Free();
            }
        }
    }
}
