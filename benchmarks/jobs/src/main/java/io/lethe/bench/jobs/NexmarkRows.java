package io.lethe.bench.jobs;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.types.Row;

import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * Nexmark events as the rows SQL reads, in the layout of the Nexmark project's tables: one row per event
 * with its kind ({@code event_type} 0 person, 1 auction, 2 bid), one nested row per kind (null for the
 * other two) and the event time {@code dateTime}. Times are {@code TIMESTAMP(3)} without a time zone,
 * in UTC.
 */
final class NexmarkRows {
    static final int PERSON = 0;
    static final int AUCTION = 1;
    static final int BID = 2;

    private static final String[] PERSON_FIELDS = {"id", "name", "emailAddress", "creditCard", "city", "state",
        "extra"};
    private static final String[] AUCTION_FIELDS = {"id", "itemName", "description", "initialBid", "reserve",
        "expires", "seller", "category", "extra"};
    private static final String[] BID_FIELDS = {"auction", "bidder", "price", "channel", "url", "extra"};
    private static final String[] EVENT_FIELDS = {"event_type", "person", "auction", "bid", "dateTime"};

    /** The rows' type in the DataStream. */
    static final TypeInformation<Row> TYPE = Types.ROW_NAMED(EVENT_FIELDS, Types.INT,
            Types.ROW_NAMED(PERSON_FIELDS, Types.LONG, Types.STRING, Types.STRING, Types.STRING, Types.STRING,
                    Types.STRING, Types.STRING),
            Types.ROW_NAMED(AUCTION_FIELDS, Types.LONG, Types.STRING, Types.STRING, Types.LONG, Types.LONG,
                    Types.LOCAL_DATE_TIME, Types.LONG, Types.LONG, Types.STRING),
            Types.ROW_NAMED(BID_FIELDS, Types.LONG, Types.LONG, Types.LONG, Types.STRING, Types.STRING,
                    Types.STRING),
            Types.LOCAL_DATE_TIME);

    private NexmarkRows() {}

    /**
     * The rows' table schema: the same columns with millisecond timestamps, {@code dateTime} the event-time
     * attribute with the specification's watermark 4 s behind the newest event.
     */
    static Schema schema() {
        return Schema.newBuilder()
                .column("event_type", DataTypes.INT())
                .column("person", DataTypes.ROW(
                        DataTypes.FIELD("id", DataTypes.BIGINT()),
                        DataTypes.FIELD("name", DataTypes.STRING()),
                        DataTypes.FIELD("emailAddress", DataTypes.STRING()),
                        DataTypes.FIELD("creditCard", DataTypes.STRING()),
                        DataTypes.FIELD("city", DataTypes.STRING()),
                        DataTypes.FIELD("state", DataTypes.STRING()),
                        DataTypes.FIELD("extra", DataTypes.STRING())))
                .column("auction", DataTypes.ROW(
                        DataTypes.FIELD("id", DataTypes.BIGINT()),
                        DataTypes.FIELD("itemName", DataTypes.STRING()),
                        DataTypes.FIELD("description", DataTypes.STRING()),
                        DataTypes.FIELD("initialBid", DataTypes.BIGINT()),
                        DataTypes.FIELD("reserve", DataTypes.BIGINT()),
                        DataTypes.FIELD("expires", DataTypes.TIMESTAMP(3)),
                        DataTypes.FIELD("seller", DataTypes.BIGINT()),
                        DataTypes.FIELD("category", DataTypes.BIGINT()),
                        DataTypes.FIELD("extra", DataTypes.STRING())))
                .column("bid", DataTypes.ROW(
                        DataTypes.FIELD("auction", DataTypes.BIGINT()),
                        DataTypes.FIELD("bidder", DataTypes.BIGINT()),
                        DataTypes.FIELD("price", DataTypes.BIGINT()),
                        DataTypes.FIELD("channel", DataTypes.STRING()),
                        DataTypes.FIELD("url", DataTypes.STRING()),
                        DataTypes.FIELD("extra", DataTypes.STRING())))
                .column("dateTime", DataTypes.TIMESTAMP(3))
                .watermark("dateTime", "`dateTime` - INTERVAL '4' SECOND")
                .build();
    }

    static Row toRow(NexmarkEvent event) {
        if (event instanceof NexmarkEvent.Person p) {
            return Row.of(PERSON, Row.of(p.id(), p.name(), p.emailAddress(), p.creditCard(), p.city(), p.state(),
                    p.extra()), null, null, time(p.dateTime()));
        }
        if (event instanceof NexmarkEvent.Auction a) {
            return Row.of(AUCTION, null, Row.of(a.id(), a.itemName(), a.description(), a.initialBid(), a.reserve(),
                    time(a.expires()), a.seller(), a.category(), a.extra()), null, time(a.dateTime()));
        }
        NexmarkEvent.Bid b = (NexmarkEvent.Bid) event;
        return Row.of(BID, null, null, Row.of(b.auction(), b.bidder(), b.price(), b.channel(), b.url(), b.extra()),
                time(b.dateTime()));
    }

    static LocalDateTime time(long epochMillis) {
        return LocalDateTime.ofEpochSecond(Math.floorDiv(epochMillis, 1000),
                (int) Math.floorMod(epochMillis, 1000) * 1_000_000, ZoneOffset.UTC);
    }
}
