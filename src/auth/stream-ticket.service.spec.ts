import { JwtService } from '@nestjs/jwt';
import { loadConfig } from '../config/app-config.js';
import { STREAM_TICKET_AUDIENCE, StreamTicketService } from './stream-ticket.service.js';

describe('StreamTicketService', () => {
  const secret = 'a-secret-of-sixteen-characters';
  const jwt = new JwtService({ secret, signOptions: { algorithm: 'HS256' }, verifyOptions: { algorithms: ['HS256'] } });
  const tickets = new StreamTicketService(jwt, loadConfig({ JWT_SECRET: secret, STREAM_TICKET_TTL_SECONDS: '45' }));
  const runId = '0b5f3c1e-8d4a-4c5e-9f10-2a3b4c5d6e7f';
  const alice = { userId: 'alice', isAdmin: false, groups: [] };

  it('issues a ticket for one run and user, with its own audience and the configured lifetime', async () => {
    const issued = await tickets.issue(alice, runId);
    expect(issued.expires_in).toBe(45);
    const claims = jwt.decode(issued.ticket) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: 'alice', run_id: runId, aud: STREAM_TICKET_AUDIENCE });
    expect((claims.exp as number) - (claims.iat as number)).toBe(45);
    await expect(tickets.verify(issued.ticket)).resolves.toEqual({ sub: 'alice', run_id: runId });
  });

  it('never outlives the credential that asked for it, and names the API key that did', async () => {
    const now = Math.floor(Date.now() / 1000);
    const shortLived = await tickets.issue({ ...alice, credentialExpiresAt: now + 10 }, runId);
    expect(shortLived.expires_in).toBeLessThanOrEqual(10);
    expect((jwt.decode(shortLived.ticket) as { exp: number }).exp).toBeLessThanOrEqual(now + 10);
    const keyId = '5d0c7f4e-1b2a-4c3d-8e9f-0a1b2c3d4e5f';
    const byKey = await tickets.issue({ ...alice, apiKeyId: keyId }, runId);
    expect(byKey.expires_in).toBe(45);
    await expect(tickets.verify(byKey.ticket)).resolves.toEqual({ sub: 'alice', run_id: runId, api_key_id: keyId });
  });

  it('refuses a bearer token, an expired ticket, a ticket without run_id and one signed with another secret', async () => {
    const now = Math.floor(Date.now() / 1000);
    const bearer = jwt.sign({ sub: 'alice', run_id: runId }, { expiresIn: 60 });
    await expect(tickets.verify(bearer)).rejects.toThrow(/Invalid stream ticket/);
    const expired = jwt.sign({ sub: 'alice', run_id: runId, aud: STREAM_TICKET_AUDIENCE, exp: now - 1 });
    await expect(tickets.verify(expired)).rejects.toThrow(/expired/);
    const noRun = jwt.sign({ sub: 'alice', aud: STREAM_TICKET_AUDIENCE }, { expiresIn: 60 });
    await expect(tickets.verify(noRun)).rejects.toThrow(/must carry/);
    const foreign = new JwtService({ secret: 'another-secret-sixteen+' }).sign({ sub: 'alice', run_id: runId, aud: STREAM_TICKET_AUDIENCE }, { expiresIn: 60 });
    await expect(tickets.verify(foreign)).rejects.toThrow(/Invalid stream ticket/);
  });
});
