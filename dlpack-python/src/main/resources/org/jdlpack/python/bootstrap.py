# The Python half of the dlpack-python bridge, run once by Interpreter.java in a module of its own,
# _jdlpack, so that nothing here shows in __main__. _jdlpack_dlpack and JavaTensor are not defined
# here: JavaTensors.java and JavaTensorType.java put them into the module before this runs.
import sys, traceback

_main = sys.modules['__main__'].__dict__

def _guard(f, *args):
    # Every call from Java comes through here, so that Java sees (ok, value) or
    # (False, traceback) and never a pending exception.
    try:
        return (True, f(*args))
    except BaseException:
        return (False, traceback.format_exc())

def _exec(src):
    exec(src, _main)

def _eval(src):
    return eval(src, _main)

def _get(name):
    return _main[name]

def _set(name, value):
    _main[name] = value

def _capsule_of(obj):
    if type(obj).__name__ == 'PyCapsule':
        return obj
    if getattr(type(obj), '__dlpack__', None) is None:
        raise TypeError(type(obj).__module__ + '.' + type(obj).__qualname__ + ' has no __dlpack__')
    try:
        return obj.__dlpack__(max_version=(1, 3))
    except TypeError:
        # A producer older than DLPack 1.0 does not take max_version: the array API's fallback.
        return obj.__dlpack__()

_NOT_COPIED = ('a JavaTensor stands for a Java tensor and cannot be %s: pass the object itself; '
               'np.from_dlpack(x) shares its memory, np.from_dlpack(x).copy() copies it')

# JavaTensor is a C-level type that JavaTensorType.java made (PyType_FromSpec) and put into this
# module before this runs: its __dlpack__, __dlpack_device__ and deallocator are FFM upcalls, and
# its __dlpack_c_exchange_api__ is the DLPack C exchange API. Only Java makes instances. What need
# not be fast is added here, in Python.

def _read_only(self, name, value=None):
    raise AttributeError('JavaTensor attributes are read-only')

# A copy would either share the Java tensor's memory (not what copy means) or need Java to
# allocate; pickling cannot carry Java memory to another process. Both are refused.
def _refuse_copy(self):
    raise TypeError(_NOT_COPIED % 'copied')

def _refuse_deepcopy(self, memo):
    raise TypeError(_NOT_COPIED % 'copied')

def _refuse_pickle(self, protocol):
    raise TypeError(_NOT_COPIED % 'pickled')

def _repr(self):
    return 'JavaTensor(device=%r)' % (self._jdlpack_device,)

JavaTensor.__setattr__ = _read_only
JavaTensor.__delattr__ = _read_only
JavaTensor.__copy__ = _refuse_copy
JavaTensor.__deepcopy__ = _refuse_deepcopy
JavaTensor.__reduce_ex__ = _refuse_pickle
JavaTensor.__repr__ = _repr
# The attributes an instance has, as a class with __slots__ would list them.
JavaTensor.__slots__ = ('_jdlpack_registration', '_jdlpack_device', '__weakref__')
del _read_only, _refuse_copy, _refuse_deepcopy, _refuse_pickle, _repr
