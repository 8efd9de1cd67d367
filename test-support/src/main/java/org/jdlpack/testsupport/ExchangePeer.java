package org.jdlpack.testsupport;

import java.nio.file.Path;

/**
 * The DLPack 1.3 C exchange API peer ({@code exchange_peer.c}): a C consumer of the exchange API
 * (and the same consumer on {@code __dlpack__}), a small C producer type, and hostile tables, for
 * Python to load with {@code ctypes.PyDLL} in the embedded interpreter. It calls the CPython C API
 * without linking libpython: the symbols resolve against the libpython the process loaded.
 *
 * <p>Thread safety: {@link #library()} may be called from any thread.
 */
public final class ExchangePeer {

    private static Path library;

    private ExchangePeer() {
    }

    /** {@return the compiled shared library, built once per JVM} */
    public static synchronized Path library() {
        if (library == null) {
            library = NativeBuild.compile("libjdlpack_exchange.so", "-shared", "-fPIC", "exchange_peer.c");
        }
        return library;
    }

    /**
     * {@return Python statements that load the peer as {@code name} with its functions' ctypes
     * signatures, and define {@code CTensor}, the C producer type (instances have a length
     * {@code n}, a {@code __dlpack__} and the exchange API)}
     *
     * @param name the variable to bind the library to
     */
    public static String pythonSetup(String name) {
        String path = library().toString().replace("\\", "\\\\").replace("'", "\\'");
        return String.join("\n",
                "import ctypes",
                name + " = ctypes.PyDLL('" + path + "')",
                "_i64p = ctypes.POINTER(ctypes.c_int64)",
                "for _f in ('xc_consume_exchange', 'xc_view_exchange', 'xc_consume_dlpack'):",
                "    getattr(" + name + ", _f).argtypes = (ctypes.py_object, ctypes.c_int64, _i64p)",
                "    getattr(" + name + ", _f).restype = ctypes.c_int",
                name + ".xc_allocate.argtypes = (ctypes.py_object, ctypes.c_int32, ctypes.c_int32, _i64p, ctypes.c_uint8, "
                        + "ctypes.c_uint8, ctypes.c_char_p, ctypes.c_char_p, _i64p)",
                name + ".xc_allocate.restype = ctypes.c_int",
                name + ".xc_current_work_stream.argtypes = (ctypes.py_object, ctypes.c_int32, ctypes.c_int32, _i64p)",
                name + ".xc_current_work_stream.restype = ctypes.c_int",
                name + ".xc_from_py_object_of.argtypes = (ctypes.py_object, ctypes.py_object)",
                name + ".xc_from_py_object_of.restype = ctypes.c_int",
                name + ".xc_round_trip.argtypes = (ctypes.py_object,)",
                name + ".xc_round_trip.restype = ctypes.py_object",
                name + ".xc_to_py.argtypes = (ctypes.py_object, ctypes.c_int64)",
                name + ".xc_to_py.restype = ctypes.py_object",
                name + ".xc_to_py_twice.argtypes = (ctypes.py_object, ctypes.c_int64, _i64p)",
                name + ".xc_to_py_twice.restype = ctypes.py_object",
                name + ".xc_producer_capsule.restype = ctypes.py_object",
                name + ".xc_producer_dlpack.argtypes = (ctypes.py_object,)",
                name + ".xc_producer_dlpack.restype = ctypes.py_object",
                name + ".xc_hostile_capsule.argtypes = (ctypes.c_int,)",
                name + ".xc_hostile_capsule.restype = ctypes.py_object",
                name + ".xc_producer_deleted.restype = ctypes.c_int64",
                name + ".xc_producer_made.restype = ctypes.c_int64",
                "class CTensor:",
                "    '''The C producer type: a float32 vector of n elements 0, 0.5, 1, ... made by C on each export.'''",
                "    __dlpack_c_exchange_api__ = " + name + ".xc_producer_capsule()",
                "    def __init__(self, n):",
                "        self.n = n",
                "    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):",
                "        return " + name + ".xc_producer_dlpack(self)",
                "    def __dlpack_device__(self):",
                "        return (1, 0)",
                "");
    }
}
