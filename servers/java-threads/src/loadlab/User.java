package loadlab;

import java.util.List;

/** One of the contract's ten users; serialized per request by {@link #appendJson}. */
record User(int id, String name, String email, int age, boolean active) {

    static final List<User> ALL = List.of(
            new User(1, "Ada Lovelace", "ada.lovelace@example.com", 36, true),
            new User(2, "Alan Turing", "alan.turing@example.com", 41, true),
            new User(3, "Grace Hopper", "grace.hopper@example.com", 85, false),
            new User(4, "Edsger Dijkstra", "edsger.dijkstra@example.com", 72, true),
            new User(5, "Barbara Liskov", "barbara.liskov@example.com", 86, true),
            new User(6, "Donald Knuth", "donald.knuth@example.com", 88, false),
            new User(7, "Margaret Hamilton", "margaret.hamilton@example.com", 90, true),
            new User(8, "Ken Thompson", "ken.thompson@example.com", 83, true),
            new User(9, "Frances Allen", "frances.allen@example.com", 88, false),
            new User(10, "Dennis Ritchie", "dennis.ritchie@example.com", 70, true));

    StringBuilder appendJson(StringBuilder out) {
        out.append('{');
        Json.key(out, "id").append(id).append(',');
        Json.string(Json.key(out, "name"), name).append(',');
        Json.string(Json.key(out, "email"), email).append(',');
        Json.key(out, "age").append(age).append(',');
        Json.key(out, "active").append(active);
        return out.append('}');
    }

    static String listJson(List<User> users) {
        StringBuilder out = new StringBuilder(1024).append('[');
        for (int i = 0; i < users.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            users.get(i).appendJson(out);
        }
        return out.append(']').toString();
    }
}
