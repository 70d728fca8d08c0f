package early

// Glance is glance, for the external tests (this package's own test files
// import nothing, so that its initialization order in the test binary is
// the one it has in landjail: TestInitBeforeOS).
var Glance = glance
