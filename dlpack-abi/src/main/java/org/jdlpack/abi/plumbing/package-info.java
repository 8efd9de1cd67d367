/**
 * What every jdlpack module's internals are built on, exported to those modules only: the native
 * plumbing of their call layers (loading a library and binding its functions with a missing symbol
 * named, the call shapes, reports that never throw, the native-access message that names the
 * flag), and the one {@link org.jdlpack.abi.plumbing.Ledger} of objects a caller may forget (the
 * safety net, leak reports, creation sites). Not an API.
 */
package org.jdlpack.abi.plumbing;
