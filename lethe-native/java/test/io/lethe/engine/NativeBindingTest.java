package io.lethe.engine;

import static io.lethe.engine.LetheDbTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.internal.Native;
import io.lethe.engine.internal.NativeLibrary;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JNI layer itself: status mapping, native object accounting, class loading, close races. */
class NativeBindingTest {
    @TempDir Path dir;

    @Test
    void everyStatusCodeCrossesJniWithItsCodeAndMessage() throws Exception {
        NativeLibrary.ensureLoaded();
        for (StatusCode code : StatusCode.values()) {
            if (code == StatusCode.OK) {
                continue;
            }
            LetheException e = assertThrows(LetheException.class, () -> Native.raiseStatus(code.code(), "msg-" + code));
            assertEquals(code, e.code());
            assertTrue(e.getMessage().contains("msg-" + code), e.getMessage());
        }
        // An unknown code is a C++ exception inside the bridge: it must surface as a Java exception.
        LetheException e = assertThrows(LetheException.class, () -> Native.raiseStatus(99, "x"));
        assertEquals(StatusCode.IO_ERROR, e.code());
        Native.raiseStatus(0, "ok");  // OK throws nothing
    }

    @Test
    void everyNativeObjectIsFreed() throws Exception {
        NativeLibrary.ensureLoaded();
        long before = Native.liveObjects();
        LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().build());
        ColumnFamilyHandle cf = db.defaultColumnFamily();
        db.put(cf, b("k"), b("v"));
        List<AutoCloseable> open = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            LetheIterator it = db.newIterator(cf);
            it.seekToFirst();
            open.add(it);
            open.add(db.getSnapshot());
        }
        assertEquals(before + 21, Native.liveObjects());
        open.get(0).close();
        open.get(1).close();
        assertEquals(before + 19, Native.liveObjects());
        db.close();  // frees the rest
        assertEquals(before, Native.liveObjects());
        for (AutoCloseable c : open) {
            c.close();
        }
        assertEquals(before, Native.liveObjects());
    }

    @Test
    void loadsUnderTwoIsolatedClassLoaders() throws Exception {
        URL classes = LetheDb.class.getProtectionDomain().getCodeSource().getLocation();
        for (int i = 0; i < 2; i++) {
            try (URLClassLoader loader = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
                Class<?> dbClass = loader.loadClass("io.lethe.engine.LetheDb");
                assertTrue(dbClass != LetheDb.class, "the class must come from the isolated loader");
                Class<?> optionsClass = loader.loadClass("io.lethe.engine.DbOptions");
                Object builder = optionsClass.getMethod("builder").invoke(null);
                Object options = builder.getClass().getMethod("build").invoke(builder);
                Object db = dbClass.getMethod("open", String.class, optionsClass)
                        .invoke(null, dir.resolve("cl" + i).toString(), options);
                Object cf = dbClass.getMethod("defaultColumnFamily").invoke(db);
                Class<?> cfClass = loader.loadClass("io.lethe.engine.ColumnFamilyHandle");
                dbClass.getMethod("put", cfClass, byte[].class, byte[].class).invoke(db, cf, b("k"), b("v" + i));
                Method get = dbClass.getMethod("get", cfClass, byte[].class);
                assertEquals("v" + i, LetheDbTest.s((byte[]) get.invoke(db, cf, b("k"))));
                dbClass.getMethod("close").invoke(db);
            }
        }
        // And this test's own loader still works alongside.
        try (LetheDb db = LetheDb.open(dir.resolve("own").toString(), DbOptions.builder().build())) {
            db.put(db.defaultColumnFamily(), b("k"), b("v"));
        }
    }

    @Test
    void closeWaitsForCallsInFlightAndLaterCallsFailCleanly() throws Exception {
        LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().build());
        ColumnFamilyHandle cf = db.defaultColumnFamily();
        for (int i = 0; i < 1000; i++) {
            db.put(cf, b("k" + i), new byte[100]);
        }
        int threads = 4;
        CountDownLatch started = new CountDownLatch(threads);
        AtomicInteger completed = new AtomicInteger();
        AtomicReference<Throwable> unexpected = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                started.countDown();
                try {
                    while (true) {
                        db.get(cf, b("k" + (completed.incrementAndGet() % 1000)));
                        try (LetheIterator it = db.newIterator(cf)) {
                            it.seekToFirst();
                            for (int n = 0; n < 50 && it.isValid(); n++) {
                                it.next();
                            }
                        }
                    }
                } catch (IllegalStateException expected) {
                    // closed underneath us: the clean outcome
                } catch (Throwable other) {
                    unexpected.set(other);
                }
            });
            w.start();
            workers.add(w);
        }
        started.await();
        Thread.sleep(200);
        db.close();
        for (Thread w : workers) {
            w.join(10_000);
        }
        assertEquals(null, unexpected.get());
        assertTrue(completed.get() > 0);
    }
}
