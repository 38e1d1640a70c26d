package hub_test

import (
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// BenchmarkMessageSend measures message_send to a DM and to rooms of 10,
// 100 and 1,000 members, every member following all (so every member but
// the author gets a row). Besides time per send it reports store round
// trips per send (trips/op), store operations per send (items/op) and
// items/op over the number of recipients (items/recipient: the per-row
// cost plus the message's fixed cost spread over its recipients).
func BenchmarkMessageSend(b *testing.B) {
	for _, ad := range teststores.All() {
		for _, size := range []int{0, 10, 100, 1000} {
			name := fmt.Sprintf("%s/room%d", ad.Name, size)
			if size == 0 {
				name = ad.Name + "/dm"
			}
			b.Run(name, func(b *testing.B) {
				var items *writeCounter // limits_test.go
				f := newFixture(b, ad, func(s store.Store) store.Store { items = &writeCounter{Store: s}; return items })
				dest, recipients := toDM(f.b.AgentID), 1
				if size > 0 {
					room, _ := f.bigRoom("bench", size-2)
					dest, recipients = toRoom(room.RoomID), size-1
				}
				cr := f.prime(f.a)
				f.st.Reset()
				items.items.Store(0)
				i := 0
				for b.Loop() {
					i++
					out, err := send(f, cr, fmt.Sprintf("bench-%d", i), hub.MessageSendInput{Destination: dest, BodyMD: "benchmark message"})
					if err != nil {
						b.Fatalf("MessageSend: %v", err)
					}
					if out.AttentionCount != recipients {
						b.Fatalf("attention_count %d, want %d", out.AttentionCount, recipients)
					}
				}
				n := float64(i)
				b.ReportMetric(float64(f.st.Reset())/n, "trips/op")
				perSend := float64(items.items.Load()) / n
				b.ReportMetric(perSend, "items/op")
				b.ReportMetric(perSend/float64(recipients), "items/recipient")
			})
		}
	}
}
