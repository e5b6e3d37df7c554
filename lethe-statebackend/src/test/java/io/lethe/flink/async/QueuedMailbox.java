package io.lethe.flink.async;

import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.function.ThrowingRunnable;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A mailbox as a task has one: mails from any thread wait in a queue and run on the thread that
 * yields (the test's thread, standing for the task thread), never on the thread that sent them.
 */
final class QueuedMailbox implements MailboxExecutor {
    private final BlockingQueue<ThrowingRunnable<? extends Exception>> mails = new LinkedBlockingQueue<>();

    @Override
    public void execute(MailOptions mailOptions, ThrowingRunnable<? extends Exception> command,
            String descriptionFormat, Object... descriptionArgs) {
        mails.add(command);
    }

    @Override
    public void yield() throws InterruptedException {
        run(mails.take());
    }

    @Override
    public boolean tryYield() {
        ThrowingRunnable<? extends Exception> mail = mails.poll();
        if (mail == null) {
            return false;
        }
        run(mail);
        return true;
    }

    @Override
    public boolean shouldInterrupt() {
        return false;
    }

    /** Runs every mail waiting now and those they send; returns how many ran. */
    int runAll() {
        int ran = 0;
        while (tryYield()) {
            ran++;
        }
        return ran;
    }

    private static void run(ThrowingRunnable<? extends Exception> mail) {
        try {
            mail.run();
        } catch (Exception e) {
            throw new FlinkRuntimeException("A mail failed", e);
        }
    }
}
