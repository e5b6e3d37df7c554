package io.lethe.flink;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;

import org.junit.jupiter.api.Test;

/**
 * The backend's dependencies form no cycle: neither between its packages ({@code io.lethe.flink}
 * and those below it) nor between its classes (a nested class counts as its outer class). Both
 * rules are also run on a fixture with a deliberate cycle, which they must reject. The packages
 * keep their floors: expiry and timers, state, snapshot, restore, then the backend itself, each
 * using only the floors below it.
 */
class DependencyRulesTest {
    private static final String BACKEND = "io.lethe.flink";
    private static final String FIXTURE = "io.lethe.flink.testing.cyclefixture";

    private static final JavaClasses MAIN_CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(BACKEND);

    @Test
    void packagesHaveNoCycles() {
        packagesFreeOfCycles(BACKEND).check(MAIN_CLASSES);
    }

    @Test
    void classesHaveNoCycles() {
        classesFreeOfCycles(BACKEND).check(MAIN_CLASSES);
    }

    @Test
    void packagesKeepTheirFloors() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("backend").definedBy(BACKEND)
                .layer("restore").definedBy(BACKEND + ".restore..")
                .layer("snapshot").definedBy(BACKEND + ".snapshot..")
                .layer("state").definedBy(BACKEND + ".state..")
                .layer("expiry").definedBy(BACKEND + ".expiry..")
                .layer("timers").definedBy(BACKEND + ".timers..")
                .layer("async").definedBy(BACKEND + ".async..")
                .whereLayer("backend").mayNotBeAccessedByAnyLayer()
                .whereLayer("restore").mayOnlyBeAccessedByLayers("backend")
                .whereLayer("async").mayOnlyBeAccessedByLayers("backend")
                .whereLayer("snapshot").mayOnlyBeAccessedByLayers("backend", "restore")
                .whereLayer("state").mayOnlyBeAccessedByLayers("backend", "restore", "snapshot", "async")
                .whereLayer("expiry").mayOnlyBeAccessedByLayers("backend", "restore", "snapshot", "state")
                .whereLayer("timers").mayOnlyBeAccessedByLayers("backend", "restore", "snapshot")
                .check(MAIN_CLASSES);
    }

    @Test
    void theRulesRejectACycle() {
        JavaClasses fixture = new ClassFileImporter().importPackages(FIXTURE);
        assertTrue(fixture.size() >= 2, "the fixture's classes were found");
        AssertionError packages = assertThrows(AssertionError.class,
                () -> packagesFreeOfCycles(FIXTURE).check(fixture));
        assertTrue(packages.getMessage().contains("Cycle detected"), packages.getMessage());
        assertThrows(AssertionError.class, () -> classesFreeOfCycles(FIXTURE).check(fixture));
    }

    @Test
    void theBackendsClassesAreAnalysed() {
        assertTrue(MAIN_CLASSES.contain(LetheKeyedStateBackend.class));
        assertTrue(MAIN_CLASSES.contain(io.lethe.flink.state.AbstractLetheState.class));
        assertFalse(MAIN_CLASSES.contain(DependencyRulesTest.class), "test classes are not part of the rule");
    }

    private static ArchRule packagesFreeOfCycles(String root) {
        return slices().assignedFrom(within(root, JavaClass::getPackageName))
                .as("packages under " + root).should().beFreeOfCycles();
    }

    private static ArchRule classesFreeOfCycles(String root) {
        return slices().assignedFrom(within(root, c -> c.getName().replaceFirst("\\$.*", "")))
                .as("classes under " + root).should().beFreeOfCycles();
    }

    /** One slice per name {@code naming} gives a class under {@code root}; other classes are ignored. */
    private static SliceAssignment within(String root, java.util.function.Function<JavaClass, String> naming) {
        return new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
                String pkg = javaClass.getPackageName();
                if (!pkg.equals(root) && !pkg.startsWith(root + ".")) {
                    return SliceIdentifier.ignore();
                }
                return SliceIdentifier.of(naming.apply(javaClass));
            }

            @Override
            public String getDescription() {
                return "slices under " + root;
            }
        };
    }
}
