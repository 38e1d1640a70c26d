package hub

// NextArrival exposes the process's waiters to the external tests: a
// channel closed at the agent's next attention arrival in this process.
func (h *Hub) NextArrival(agent string) <-chan struct{} { return h.waiters.wait(agent) }
