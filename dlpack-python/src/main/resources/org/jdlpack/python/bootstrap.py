# The Python half of the dlpack-python bridge, run once by Interpreter.java in a module of its own,
# _jdlpack, so that nothing here shows in __main__. _jdlpack_dlpack and JavaTensor are not defined
# here: JavaTensors.java and JavaTensorType.java put them into the module before this runs.
import sys, traceback

_main = sys.modules['__main__'].__dict__

def _guard(f, *args):
    # Every call from Java comes through here, so that Java sees (True, value) or
    # (False, traceback, "Type: message") and never a pending exception.
    try:
        return (True, f(*args))
    except BaseException as e:
        return (False, traceback.format_exc(), _exception_line(e))

def _exception_line(e):
    # The exception as a traceback's last part names it: the type (with its module unless builtins
    # or __main__), then str(e), which may run over several lines (PyTorch appends its C++ backtrace).
    t = type(e)
    name = t.__qualname__ if t.__module__ in ('builtins', '__main__') else t.__module__ + '.' + t.__qualname__
    try:
        message = str(e)
    except BaseException:
        message = '<exception str() failed>'
    return name + ': ' + message if message else name

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
    torch = sys.modules.get('torch')
    if torch is not None and isinstance(obj, torch.Tensor):
        _refuse_torch_view_bits(obj)
    try:
        return obj.__dlpack__(max_version=(1, 3))
    except TypeError:
        # A producer older than DLPack 1.0 does not take max_version: the array API's fallback.
        return obj.__dlpack__()

def _refuse_torch_view_bits(t):
    # A torch view may keep a conjugation or a negation in a bit instead of its memory; DLPack
    # carries memory only, so the tensor would arrive with other values than torch shows. Torch's
    # __dlpack__ refuses the conjugate bit and passes the negative bit. Imports through torch's
    # exchange API come here too when either bit is set (TorchViewBits.java).
    if t.is_conj():
        raise BufferError("a torch tensor with the conjugate bit set (a conj() view) holds the conjugates of the values "
                          "torch shows; DLPack carries memory only: call resolve_conj() (a copy) before importing it")
    if t.is_neg():
        raise BufferError("a torch tensor with the negative bit set (such as conj().imag) holds the negations of the values "
                          "torch shows; DLPack carries memory only: call resolve_neg() (a copy) before importing it")

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
