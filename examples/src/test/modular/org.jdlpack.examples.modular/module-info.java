/** A user's application on the module path: requires the library modules by name, nothing else. */
module org.jdlpack.examples.modular {
    requires org.jdlpack.python;
    requires org.jdlpack.onnxruntime;
}
