package scenarios

// secAggScenarios are the secure-aggregation scenarios on a server
// configured as `graphfed keys` configures it, in registration order.
func secAggScenarios() []Scenario {
	return []Scenario{secAggDropoutScenario(), secAggCuriousScenario(), secAggForgedKeyScenario(), secAggLateScenario()}
}
