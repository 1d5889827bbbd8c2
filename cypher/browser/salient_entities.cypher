// The user's most salient entities: mentions weighted by an exponential recency decay.
:param user_id => 'alice';
:param half_life_days => 30.0;
MATCH (e:Entity {user_id: $user_id})
WITH e, timestamp() / 1000.0 - e.last_seen AS age_s
WITH e, e.mentions * exp(-0.6931471805599453 * age_s / ($half_life_days * 86400.0)) AS salience
RETURN e.name AS entity, e.type AS type, e.mentions AS mentions,
       datetime({epochMillis: toInteger(e.last_seen * 1000)}) AS last_seen,
       round(salience, 3) AS salience
ORDER BY salience DESC, mentions DESC
LIMIT 25;
