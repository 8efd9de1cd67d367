/**
 * What dlpack-abi's own packages share and no other module uses: {@link
 * org.jdlpack.abi.stripes.ThreadStripes}, the thread striping behind the export registry's free
 * slots, the header quarantine, the counters (in {@code org.jdlpack.abi}) and the ledger's lists
 * (in {@code org.jdlpack.abi.plumbing}). Public only so that both packages reach it; not exported
 * (issue 43: nothing is exported without a user outside the module).
 */
package org.jdlpack.abi.stripes;
