import Foundation
import Tandem

struct TodoItem: Record, Equatable {
    var id = ""
    var title: String
    var done = false
    var due: Date?
}

func main(path: String) async throws {
    let db = try SharedDatabase(path: path, schema: try Schema(records: [RecordTable(TodoItem.self)]))
    let open = RecordQuery<TodoItem>(#Predicate { !$0.done }, sortBy: [SortDescriptor(\.title)])
    var updates = db.watch(open).makeAsyncIterator()              // a typed live query
    print("open now:", try await updates.next()!.map(\.title))

    var milk = try await db.write { tx in                         // one transaction, one emission
        try tx.insert(TodoItem(title: "Answer mail", due: Date()))
        return try tx.insert(TodoItem(title: "Buy milk"))        // the id is minted and returned
    }
    print("after inserts:", try await updates.next()!.map(\.title))

    milk.done = true
    try db.update(milk)                                          // one PATCH entry: {"done":1}
    print("after update:", try await updates.next()!.map(\.title))
    print("due soon:", try db.fetch(TodoItem.self, where: #Predicate { $0.due != nil }).map(\.title))
    print("queued for upload:", try db.uploadQueue.pendingCount(), "CRUD entries")
}

try await main(path: CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "todo-\(getpid()).db")
