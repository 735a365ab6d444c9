"""The suite's Hypothesis profile: no timing checks.

Hypothesis fails a test whose examples take over 200 ms each (``deadline``) or whose inputs are
slow to generate (``HealthCheck.too_slow``). Both are timings, and the suite runs on shared and
loaded machines (CI, two cores with helpers beside it): a property test once stopped a full run
on "input generation is slow" at load 7 with nothing wrong. Speed is measured by the scripts
under bench/, never by a test; every other health check stays on."""

from hypothesis import HealthCheck, settings

settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")
