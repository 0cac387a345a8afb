package notifiergrpc

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
)

// SecretTokenKey is the metadata key the gateway forwards Telegram's
// X-Telegram-Bot-Api-Secret-Token header as.
const SecretTokenKey = "x-telegram-bot-api-secret-token"

// HandleTelegramUpdate verifies the webhook secret and hands the update to
// the chat agent. With the webhook disabled (a polling bot) every update is
// refused with PermissionDenied.
func (s *NotifierService) HandleTelegramUpdate(ctx context.Context, req *notifierv1.HandleTelegramUpdateRequest) (*notifierv1.HandleTelegramUpdateResponse, error) {
	if s.disabled {
		s.refusals.Refuse(chat.ReasonWebhookDisabled)
		s.logger.WarnContext(ctx, "telegram webhook update refused", "reason", chat.ReasonWebhookDisabled)
		return nil, status.Error(codes.PermissionDenied, "Telegram webhook updates are disabled on this notifier (TELEGRAM_WEBHOOK_DISABLED=true)")
	}
	if err := s.checkSecret(ctx); err != nil {
		s.refusals.Refuse(chat.ReasonWebhookSecret)
		s.logger.WarnContext(ctx, "telegram webhook update refused", "reason", chat.ReasonWebhookSecret)
		return nil, err
	}
	if s.updates == nil {
		return nil, status.Error(codes.Unimplemented, "the Telegram chat agent is not configured")
	}
	outcome, err := s.updates.Handle(ctx, toUpdate(req.GetUpdate()))
	if err != nil {
		if errors.Is(err, chat.ErrInvalid) {
			return nil, grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "update", Description: "must carry a message with a chat and message id and a positive update_id"})
		}
		return nil, grpcserver.InternalError(ctx, s.logger, err, "handling Telegram update")
	}
	return &notifierv1.HandleTelegramUpdateResponse{Outcome: outcome}, nil
}

// checkSecret compares the secret token in constant time. No secret is
// configured only without a bot token (the configuration refuses a token
// without one): offline, replies go to the delivery log, not to a chat.
func (s *NotifierService) checkSecret(ctx context.Context) error {
	if s.secret == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	got := md.Get(SecretTokenKey)
	if len(got) != 1 || subtle.ConstantTimeCompare([]byte(got[0]), []byte(s.secret)) != 1 {
		return status.Error(codes.Unauthenticated, "missing or wrong Telegram webhook secret token")
	}
	return nil
}

// toUpdate converts an update. Every Bot API update kind is recognised;
// the ones the agent does not act on carry only their kind, so that they
// are counted and answered 2xx.
func toUpdate(u *notifierv1.TelegramUpdate) chat.Update {
	out := chat.Update{ID: u.GetUpdateId(), Kind: updateKind(u)}
	switch out.Kind {
	case chat.KindMessage:
		out.Message = toIncoming(u.GetMessage())
	case chat.KindEditedMessage:
		out.Message, out.Edited = toIncoming(u.GetEditedMessage()), true
	case chat.KindChannelPost:
		out.Message, out.Channel = toIncoming(u.GetChannelPost()), true
	case chat.KindEditedChannelPost:
		out.Message, out.Channel, out.Edited = toIncoming(u.GetEditedChannelPost()), true, true
	case chat.KindCallbackQuery:
		q := u.GetCallbackQuery()
		out.Callback = &chat.Callback{ID: q.GetId(), From: toUser(q.GetFrom()), Message: toIncoming(q.GetMessage()), Data: q.GetData()}
	case chat.KindMyChatMember:
		m := u.GetMyChatMember()
		out.Membership = &chat.Membership{
			Chat: toChat(m.GetChat()), From: toUser(m.GetFrom()), Member: toUser(m.GetNewChatMember().GetUser()),
			Old: m.GetOldChatMember().GetStatus(), New: m.GetNewChatMember().GetStatus(), Date: unixTime(m.GetDate()),
		}
	}
	return out
}

// updateKind names the kind of update u carries (at most one, says the Bot
// API); KindUnknown when none that this proto declares.
func updateKind(u *notifierv1.TelegramUpdate) string {
	kinds := []struct {
		name string
		set  bool
	}{
		{chat.KindMessage, u.GetMessage() != nil},
		{chat.KindEditedMessage, u.GetEditedMessage() != nil},
		{chat.KindChannelPost, u.GetChannelPost() != nil},
		{chat.KindEditedChannelPost, u.GetEditedChannelPost() != nil},
		{chat.KindBusinessConnection, u.GetBusinessConnection() != nil},
		{chat.KindBusinessMessage, u.GetBusinessMessage() != nil},
		{chat.KindEditedBusinessMessage, u.GetEditedBusinessMessage() != nil},
		{chat.KindDeletedBusinessMessages, u.GetDeletedBusinessMessages() != nil},
		{chat.KindMessageReaction, u.GetMessageReaction() != nil},
		{chat.KindMessageReactionCount, u.GetMessageReactionCount() != nil},
		{chat.KindInlineQuery, u.GetInlineQuery() != nil},
		{chat.KindChosenInlineResult, u.GetChosenInlineResult() != nil},
		{chat.KindCallbackQuery, u.GetCallbackQuery() != nil},
		{chat.KindShippingQuery, u.GetShippingQuery() != nil},
		{chat.KindPreCheckoutQuery, u.GetPreCheckoutQuery() != nil},
		{chat.KindPurchasedPaidMedia, u.GetPurchasedPaidMedia() != nil},
		{chat.KindPoll, u.GetPoll() != nil},
		{chat.KindPollAnswer, u.GetPollAnswer() != nil},
		{chat.KindMyChatMember, u.GetMyChatMember() != nil},
		{chat.KindChatMember, u.GetChatMember() != nil},
		{chat.KindChatJoinRequest, u.GetChatJoinRequest() != nil},
		{chat.KindChatBoost, u.GetChatBoost() != nil},
		{chat.KindRemovedChatBoost, u.GetRemovedChatBoost() != nil},
		{chat.KindManagedBot, u.GetManagedBot() != nil},
	}
	for _, k := range kinds {
		if k.set {
			return k.name
		}
	}
	return chat.KindUnknown
}

func unixTime(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

func toIncoming(m *notifierv1.TelegramChatMessage) *chat.Incoming {
	if m == nil {
		return nil
	}
	in := &chat.Incoming{
		MessageID:       m.GetMessageId(),
		From:            toUser(m.GetFrom()),
		Chat:            toChat(m.GetChat()),
		Text:            m.GetText(),
		Caption:         m.GetCaption(),
		Entities:        toEntities(m.GetEntities()),
		CaptionEntities: toEntities(m.GetCaptionEntities()),
		ReplyTo:         toIncoming(m.GetReplyToMessage()),
		Media:           toMedia(m),
		ThreadID:        m.GetMessageThreadId(),
		InTopic:         m.GetIsTopicMessage(),
		Quote:           m.GetQuote().GetText(),
		Forward:         toOrigin(m.GetForwardOrigin()),
		External:        toExternal(m.GetExternalReply()),
		MigrateTo:       m.GetMigrateToChatId(),
		MigrateFrom:     m.GetMigrateFromChatId(),
	}
	if m.GetDate() > 0 {
		in.Date = time.Unix(m.GetDate(), 0).UTC()
	}
	if m.GetSenderChat() != nil {
		c := toChat(m.GetSenderChat())
		in.SenderChat = &c
	}
	return in
}

func toUser(u *notifierv1.TelegramUser) *chat.User {
	if u == nil {
		return nil
	}
	return &chat.User{ID: u.GetId(), IsBot: u.GetIsBot(), FirstName: u.GetFirstName(), LastName: u.GetLastName(), Username: u.GetUsername()}
}

func toChat(c *notifierv1.TelegramChat) chat.Chat {
	title := c.GetTitle()
	if title == "" {
		title = c.GetFirstName()
	}
	return chat.Chat{ID: c.GetId(), Type: c.GetType(), Title: title}
}

func toEntities(es []*notifierv1.TelegramMessageEntity) []chat.Entity {
	out := make([]chat.Entity, 0, len(es))
	for _, e := range es {
		out = append(out, chat.Entity{Type: e.GetType(), Offset: int(e.GetOffset()), Length: int(e.GetLength()), User: toUser(e.GetUser())})
	}
	return out
}

func toFileMedia(kind string, f *notifierv1.TelegramFile) chat.Media {
	return chat.Media{
		Kind: kind, UniqueID: f.GetFileUniqueId(), Width: int(f.GetWidth()), Height: int(f.GetHeight()),
		Duration: int(f.GetDuration()), Size: f.GetFileSize(), MimeType: f.GetMimeType(), FileName: f.GetFileName(),
		Performer: f.GetPerformer(), Title: f.GetTitle(),
	}
}

func toMedia(m *notifierv1.TelegramChatMessage) []chat.Media {
	var out []chat.Media
	if ps := m.GetPhoto(); len(ps) > 0 {
		// Sizes come smallest first; the largest describes the photo.
		out = append(out, toFileMedia("photo", ps[len(ps)-1]))
	}
	if s := m.GetSticker(); s != nil {
		out = append(out, chat.Media{Kind: "sticker", UniqueID: s.GetFileUniqueId(), Emoji: s.GetEmoji(), SetName: s.GetSetName(),
			Animated: s.GetIsAnimated(), VideoSticker: s.GetIsVideo()})
	}
	files := []struct {
		kind string
		f    *notifierv1.TelegramFile
	}{
		{"voice", m.GetVoice()}, {"audio", m.GetAudio()}, {"video", m.GetVideo()},
		{"video_note", m.GetVideoNote()}, {"animation", m.GetAnimation()},
	}
	for _, f := range files {
		if f.f != nil {
			out = append(out, toFileMedia(f.kind, f.f))
		}
	}
	// Telegram sends an animation also as a document; describe it once.
	if d := m.GetDocument(); d != nil && m.GetAnimation() == nil {
		out = append(out, toFileMedia("document", d))
	}
	if v := m.GetVenue(); v != nil {
		out = append(out, chat.Media{Kind: "venue", Title: v.GetTitle(), Address: v.GetAddress()})
	} else if l := m.GetLocation(); l != nil {
		out = append(out, chat.Media{Kind: "location", Latitude: l.GetLatitude(), Longitude: l.GetLongitude()})
	}
	if c := m.GetContact(); c != nil {
		name := c.GetFirstName()
		if c.GetLastName() != "" {
			name += " " + c.GetLastName()
		}
		out = append(out, chat.Media{Kind: "contact", Name: name})
	}
	if p := m.GetPoll(); p != nil {
		out = append(out, chat.Media{Kind: "poll", Question: p.GetQuestion()})
	}
	if d := m.GetDice(); d != nil {
		out = append(out, chat.Media{Kind: "dice", Emoji: d.GetEmoji(), Value: int(d.GetValue())})
	}
	return out
}

// toOrigin converts where a forwarded message came from; nil for none.
func toOrigin(o *notifierv1.TelegramMessageOrigin) *chat.Origin {
	if o == nil {
		return nil
	}
	out := &chat.Origin{Type: o.GetType(), Date: unixTime(o.GetDate())}
	switch o.GetType() {
	case "user":
		if u := toUser(o.GetSenderUser()); u != nil {
			out.Name = displayName(u)
		}
	case "hidden_user":
		out.Name = o.GetSenderUserName()
	case "chat":
		out.Name = toChat(o.GetSenderChat()).Title
	case "channel":
		out.Name = toChat(o.GetChat()).Title
	}
	if sig := o.GetAuthorSignature(); sig != "" && out.Name != "" {
		out.Name += " (" + sig + ")"
	}
	return out
}

// toExternal converts a replied-to message from another chat or topic;
// nil for none.
func toExternal(e *notifierv1.TelegramExternalReplyInfo) *chat.ExternalReply {
	if e == nil {
		return nil
	}
	out := &chat.ExternalReply{Origin: toOrigin(e.GetOrigin())}
	if e.GetChat() != nil {
		out.ChatTitle = toChat(e.GetChat()).Title
	}
	// The media of an external reply are the same fields as a message's.
	out.Media = toMedia(&notifierv1.TelegramChatMessage{
		Photo: e.GetPhoto(), Sticker: e.GetSticker(), Voice: e.GetVoice(), Audio: e.GetAudio(), Video: e.GetVideo(),
		VideoNote: e.GetVideoNote(), Animation: e.GetAnimation(), Document: e.GetDocument(), Location: e.GetLocation(),
		Venue: e.GetVenue(), Contact: e.GetContact(), Poll: e.GetPoll(), Dice: e.GetDice(),
	})
	return out
}

// displayName is how a user is named to the model: first and last name,
// else @username.
func displayName(u *chat.User) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" && u.Username != "" {
		name = "@" + u.Username
	}
	return name
}
