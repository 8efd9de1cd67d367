import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.util.*;

/**
 * What holds a class loader that should have been collected: reads a heap dump (HPROF, as the
 * engine tests write when a job's loader stays) and prints, for every instance whose class name
 * contains the given text, the shortest path from a GC root that follows no weak, soft, phantom or
 * final reference. With -Dsoft=true, soft references count as strong (a loader held only softly:
 * the JDK's method-handle caches, cleared when memory runs short).
 *
 * <pre>
 * /usr/lib/jvm/temurin-25-jdk-amd64/bin/java -Xmx3g engines/flink/tools/HeapPaths.java \
 *     engines/flink/target/lib-job-2.hprof ChildFirstClassLoader
 * </pre>
 *
 * A diagnosis tool, not part of the build: one file, run from source. Single-threaded.
 */
public class HeapPaths {
    static int idSize;
    static ByteBuffer[] chunks;
    static final long CHUNK = 1L << 30;
    static long pos;

    static int u1() { return get(pos++) & 0xff; }
    static byte get(long p) { return chunks[(int) (p / CHUNK)].get((int) (p % CHUNK)); }
    static int u2() { return (u1() << 8) | u1(); }
    static int u4() { return (u1() << 24) | (u1() << 16) | (u1() << 8) | u1(); }
    static long u8() { return ((long) u4() << 32) | (u4() & 0xffffffffL); }
    static long id() { return idSize == 8 ? u8() : u4() & 0xffffffffL; }
    static int size(int type) {
        return switch (type) { case 2 -> idSize; case 4, 8 -> 1; case 5, 9 -> 2; case 6, 10 -> 4; case 7, 11 -> 8; default -> throw new IllegalStateException("type " + type); };
    }

    static Map<Long, String> strings = new HashMap<>();
    static Map<Long, String> classNames = new HashMap<>();   // class object id -> name
    record ClassInfo(long id, long superId, long loader, long[] fieldNames, int[] fieldTypes, long[] staticNames, long[] staticRefs, long[] cpRefs) {}
    static Map<Long, ClassInfo> classes = new HashMap<>();
    // objects: id -> offset of its sub-record
    static Map<Long, Long> objects = new HashMap<>();
    static Map<Long, String> roots = new LinkedHashMap<>();

    public static void main(String[] args) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(args[0], "r"); FileChannel ch = f.getChannel()) {
            long len = ch.size();
            chunks = new ByteBuffer[(int) ((len + CHUNK - 1) / CHUNK)];
            for (int i = 0; i < chunks.length; i++) {
                chunks[i] = ch.map(FileChannel.MapMode.READ_ONLY, i * CHUNK, Math.min(CHUNK, len - i * CHUNK));
            }
            pos = 0;
            while (get(pos) != 0) pos++;
            pos++;
            idSize = u4();
            u8();
            List<long[]> segments = new ArrayList<>();
            while (pos < len) {
                int tag = u1();
                u4();
                long length = u4() & 0xffffffffL;
                long start = pos;
                if (tag == 0x01) {
                    long sid = id();
                    byte[] b = new byte[(int) (length - idSize)];
                    for (int i = 0; i < b.length; i++) b[i] = get(pos++);
                    strings.put(sid, new String(b, java.nio.charset.StandardCharsets.UTF_8));
                } else if (tag == 0x02) {
                    u4();
                    long cid = id();
                    u4();
                    long nid = id();
                    classNames.put(cid, strings.get(nid));
                } else if (tag == 0x0C || tag == 0x1C) {
                    segments.add(new long[] {start, start + length});
                }
                pos = start + length;
            }
            for (long[] s : segments) scan(s[0], s[1]);
            System.err.println("objects " + objects.size() + " classes " + classes.size() + " roots " + roots.size());
            bfs(args[1]);
        }
    }

    static void scan(long start, long end) {
        pos = start;
        while (pos < end) {
            long at = pos;
            int t = u1();
            switch (t) {
                case 0xFF -> roots.putIfAbsent(id(), "unknown");
                case 0x01 -> { long o = id(); id(); roots.putIfAbsent(o, "JNI global"); }
                case 0x02 -> { long o = id(); int th = u4(); u4(); roots.putIfAbsent(o, "JNI local (thread " + th + ")"); }
                case 0x03 -> { long o = id(); int th = u4(); int fr = u4(); roots.putIfAbsent(o, "Java frame (thread " + th + ", frame " + fr + ")"); }
                case 0x04 -> { long o = id(); int th = u4(); roots.putIfAbsent(o, "native stack (thread " + th + ")"); }
                case 0x05 -> roots.putIfAbsent(id(), "sticky class");
                case 0x06 -> { long o = id(); int th = u4(); roots.putIfAbsent(o, "thread block " + th); }
                case 0x07 -> roots.putIfAbsent(id(), "monitor used");
                case 0x08 -> { long o = id(); int th = u4(); u4(); roots.putIfAbsent(o, "thread object " + th); }
                case 0x20 -> {
                    long cid = id(); u4(); long sup = id(); long loader = id(); long signers = id(); long pd = id(); id(); id(); u4();
                    int cp = u2();
                    List<Long> cpRefs = new ArrayList<>(List.of(signers, pd));
                    for (int i = 0; i < cp; i++) { u2(); int ty = u1(); if (ty == 2) cpRefs.add(id()); else pos += size(ty); }
                    int sc = u2();
                    long[] sn = new long[sc]; long[] sr = new long[sc];
                    for (int i = 0; i < sc; i++) { sn[i] = id(); int ty = u1(); if (ty == 2) sr[i] = id(); else pos += size(ty); }
                    int fc = u2();
                    long[] fn = new long[fc]; int[] ft = new int[fc];
                    for (int i = 0; i < fc; i++) { fn[i] = id(); ft[i] = u1(); }
                    classes.put(cid, new ClassInfo(cid, sup, loader, fn, ft, sn, sr, cpRefs.stream().mapToLong(Long::longValue).toArray()));
                    objects.put(cid, at);
                }
                case 0x21 -> { long o = id(); u4(); id(); int n = u4(); objects.put(o, at); pos += n; }
                case 0x22 -> { long o = id(); u4(); int n = u4(); id(); objects.put(o, at); pos += (long) n * idSize; }
                case 0x23 -> { long o = id(); u4(); int n = u4(); int ty = u1(); pos += (long) n * size(ty); }
                default -> throw new IllegalStateException("sub-record " + Integer.toHexString(t) + " at " + at);
            }
        }
    }

    record Edge(long to, String label) {}

    static boolean isReference(long classId) {
        for (long c = classId; c != 0; c = classes.get(c).superId()) {
            if (Boolean.getBoolean("soft") && "java/lang/ref/SoftReference".equals(classNames.get(c))) return false;
            if ("java/lang/ref/Reference".equals(classNames.get(c)) || "java.lang.ref.Reference".equals(classNames.get(c))) return true;
        }
        return false;
    }

    static long classOf(long obj) {
        Long at = objects.get(obj);
        if (at == null) return 0;
        pos = at;
        int t = u1();
        if (t == 0x21) { id(); u4(); return id(); }
        if (t == 0x22) { id(); u4(); u4(); return id(); }
        return 0;
    }

    static List<Edge> edges(long obj) {
        List<Edge> out = new ArrayList<>();
        Long at = objects.get(obj);
        if (at == null) return out;
        pos = at;
        int t = u1();
        if (t == 0x20) {
            ClassInfo c = classes.get(obj);
            out.add(new Edge(c.loader(), "<loader>"));
            if (c.superId() != 0) out.add(new Edge(c.superId(), "<super>"));
            for (int i = 0; i < c.staticRefs().length; i++) if (c.staticRefs()[i] != 0) out.add(new Edge(c.staticRefs()[i], "static " + strings.get(c.staticNames()[i])));
            for (long r : c.cpRefs()) if (r != 0) out.add(new Edge(r, "<cp/signers/pd>"));
        } else if (t == 0x21) {
            id(); u4(); long cid = id(); u4();
            out.add(new Edge(cid, "<class>"));
            boolean ref = isReference(cid);
            for (long c = cid; c != 0; c = classes.get(c).superId()) {
                ClassInfo ci = classes.get(c);
                for (int i = 0; i < ci.fieldNames().length; i++) {
                    int ty = ci.fieldTypes()[i];
                    if (ty == 2) {
                        long r = id();
                        String name = strings.get(ci.fieldNames()[i]);
                        if (r != 0 && !(ref && name.equals("referent"))) out.add(new Edge(r, name));
                    } else pos += size(ty);
                }
            }
        } else if (t == 0x22) {
            id(); u4(); int n = u4(); long ac = id();
            out.add(new Edge(ac, "<class>"));
            for (int i = 0; i < n; i++) { long r = id(); if (r != 0) out.add(new Edge(r, "[" + i + "]")); }
        }
        return out;
    }

    static String describe(long obj) {
        if (classes.containsKey(obj)) return "class " + classNames.get(obj) + " @" + Long.toHexString(obj);
        long c = classOf(obj);
        return classNames.get(c) + " @" + Long.toHexString(obj);
    }

    static void bfs(String targetText) {
        Set<Long> targets = new HashSet<>();
        for (Map.Entry<Long, Long> e : objects.entrySet()) {
            long c = classOf(e.getKey());
            String n = classNames.get(c);
            if (n != null && n.contains(targetText) && !classes.containsKey(e.getKey())) targets.add(e.getKey());
        }
        System.out.println("targets: " + targets.stream().map(HeapPaths::describe).toList());
        Map<Long, Long> parent = new HashMap<>();
        Map<Long, String> label = new HashMap<>();
        ArrayDeque<Long> queue = new ArrayDeque<>();
        for (long r : roots.keySet()) { parent.put(r, 0L); label.put(r, "ROOT " + roots.get(r)); queue.add(r); }
        int found = 0;
        while (!queue.isEmpty() && found < targets.size()) {
            long o = queue.poll();
            if (targets.contains(o)) {
                found++;
                System.out.println("\nPATH to " + describe(o) + ":");
                List<String> steps = new ArrayList<>();
                for (long x = o; x != 0; x = parent.get(x)) steps.add(describe(x) + "   <-- via " + label.get(x));
                Collections.reverse(steps);
                steps.forEach(s -> System.out.println("  " + s));
            }
            for (Edge e : edges(o)) {
                if (!parent.containsKey(e.to()) && objects.containsKey(e.to())) {
                    parent.put(e.to(), o); label.put(e.to(), e.label()); queue.add(e.to());
                }
            }
        }
        if (found == 0) System.out.println("no strong path to any target (only weakly/softly reachable?)");
    }
}
